//! The three protection nodes over real HTTP, wired by hand the way generated routes are.

mod common;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::routing::any;
use common::{TestServer, client, handler, json_of, rate_limited_route, status_of};
use http::StatusCode;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_runtime::apikey::{KeyIndex, KeyLocation, KeyRecord, format, unix_now};
use svc_runtime::cors::{OriginConfig, OriginPolicy};
use svc_runtime::ratelimit::{Quota, RateLimiter};
use svc_runtime::store::{SqliteStore, WorkspaceStore};
use svc_runtime::{Exchange, Runtime};

fn origin_policy() -> OriginPolicy {
    OriginPolicy::new(OriginConfig {
        allowed_origins: &["https://example.com", "https://*.example.org"],
        missing_origin_allowed: true,
        methods: &["POST"],
        allowed_headers: &["content-type", "x-api-key"],
        expose_headers: &[],
        allow_credentials: false,
        max_age_seconds: Some(600),
    })
    .unwrap()
}

/// `/ws/api/origin`: Check Origin, then 200 or 403; answers preflights.
fn origin_routes() -> Router<Arc<Runtime>> {
    let policy = Arc::new(origin_policy());
    Router::new().route(
        "/ws/api/origin",
        any(
            move |State(rt): State<Arc<Runtime>>, ConnectInfo(peer): ConnectInfo<SocketAddr>, req: Request| {
                let policy = policy.clone();
                async move {
                    let (parts, _) = req.into_parts();
                    if OriginPolicy::is_preflight(&parts.method, &parts.headers) {
                        return policy.preflight(&parts.headers, "preflight");
                    }
                    let route = rt.metrics.route("origin", &[], &[]);
                    let mut ex = Exchange::new(rt, &route, parts, peer);
                    if !ex.check_origin(&route.node("origin", "check-origin"), &policy) {
                        return ex.status(StatusCode::FORBIDDEN);
                    }
                    ex.json(StatusCode::OK, &serde_json::json!({"ok": true}))
                }
            },
        ),
    )
}

async fn origin_status(server: &TestServer, origins: &[&str]) -> (StatusCode, Option<String>, Option<String>) {
    let mut req = client().post(server.url("/ws/api/origin"));
    for o in origins {
        req = req.header("origin", *o);
    }
    let r = req.send().await.unwrap();
    let acao = r
        .headers()
        .get("access-control-allow-origin")
        .map(|v| v.to_str().unwrap().to_string());
    let vary = r.headers().get("vary").map(|v| v.to_str().unwrap().to_string());
    (r.status(), acao, vary)
}

#[tokio::test]
async fn check_origin_tricks_over_http() {
    let server = TestServer::start(Arc::new(Runtime::for_tests("ws/api")), origin_routes()).await;
    let (s, acao, vary) = origin_status(&server, &["https://example.com"]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(acao.as_deref(), Some("https://example.com"));
    assert_eq!(vary.as_deref(), Some("Origin"));
    assert_eq!(
        origin_status(&server, &["https://a.b.example.org"]).await.0,
        StatusCode::OK
    );
    assert_eq!(
        origin_status(&server, &["https://example.com:443"]).await.0,
        StatusCode::OK
    );
    assert_eq!(origin_status(&server, &["https://EXAMPLE.COM"]).await.0, StatusCode::OK);
    for trick in [
        vec!["https://example.com.evil.com"],
        vec!["http://example.com"],
        vec!["https://example.com:8443"],
        vec!["https://example.com/"],
        vec!["null"],
        vec!["https://example.org"],
        vec!["https://example.com", "https://example.com"],
        vec!["https://evil.com", "https://example.com"],
    ] {
        let (s, acao, vary) = origin_status(&server, &trick).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{trick:?}");
        assert_eq!(acao, None, "{trick:?}");
        assert_eq!(vary.as_deref(), Some("Origin"), "{trick:?}");
    }
    // No Origin: the default policy lets it through, without CORS headers.
    let (s, acao, _) = origin_status(&server, &[]).await;
    assert_eq!((s, acao), (StatusCode::OK, None));
    // A blocked response has the JSON error shape.
    let body = json_of(
        client()
            .post(server.url("/ws/api/origin"))
            .header("origin", "https://evil.com"),
    )
    .await;
    assert_eq!(body["error"]["status"], 403);
    assert_eq!(body["error"]["code"], "forbidden");
}

#[tokio::test]
async fn cors_preflights() {
    let server = TestServer::start(Arc::new(Runtime::for_tests("ws/api")), origin_routes()).await;
    let preflight = |origin: &str| {
        client()
            .request(reqwest::Method::OPTIONS, server.url("/ws/api/origin"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
    };
    let r = preflight("https://example.com")
        .header("access-control-request-headers", "content-type, x-api-key")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(r.headers()["access-control-allow-origin"], "https://example.com");
    assert_eq!(r.headers()["access-control-allow-methods"], "POST, OPTIONS");
    assert_eq!(r.headers()["access-control-allow-headers"], "content-type, x-api-key");
    assert_eq!(r.headers()["access-control-max-age"], "600");
    let r = preflight("https://example.com.evil.com").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(r.headers().get("access-control-allow-origin").is_none());
}

/// `/ws/api/limited`: Rate Limit by IP.
fn limited_routes(limiter: Arc<RateLimiter>) -> Router<Arc<Runtime>> {
    Router::new().route("/ws/api/limited", rate_limited_route(limiter))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_100_concurrent_clients_exactly_the_limit_passes() {
    // 50 per hour: within the test no quota comes back, so exactly the burst (50) passes.
    let limiter = Arc::new(RateLimiter::in_memory(
        "limit",
        Quota::per(50, Duration::from_secs(3600)),
    ));
    let server = TestServer::start(Arc::new(Runtime::for_tests("ws/api")), limited_routes(limiter)).await;
    let url = server.url("/ws/api/limited");
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let c = client();
            let mut statuses = Vec::new();
            for _ in 0..3 {
                let r = c.post(&url).send().await.unwrap();
                let has_headers = r.headers().contains_key("ratelimit") && r.headers().contains_key("ratelimit-policy");
                let retry_after = r
                    .headers()
                    .get("retry-after")
                    .map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
                statuses.push((r.status(), has_headers, retry_after));
            }
            statuses
        }));
    }
    let mut ok = 0;
    let mut limited = 0;
    for t in tasks {
        for (status, has_headers, retry_after) in t.await.unwrap() {
            assert!(has_headers, "every response of a limited route has RateLimit headers");
            match status {
                StatusCode::OK => {
                    ok += 1;
                    assert_eq!(retry_after, None);
                }
                StatusCode::TOO_MANY_REQUESTS => {
                    limited += 1;
                    // T = 72 s: the next request passes in at most 72 s.
                    let r = retry_after.expect("429 carries Retry-After");
                    assert!((1..=72).contains(&r), "{r}");
                }
                s => panic!("unexpected {s}"),
            }
        }
    }
    assert_eq!(ok, 50, "exactly the burst passes");
    assert_eq!(limited, 250);
}

#[tokio::test]
async fn ratelimit_headers_and_rejections_that_consume_nothing() {
    // 2 per second: T = 500 ms.
    let limiter = Arc::new(RateLimiter::in_memory("limit", Quota::per(2, Duration::from_secs(1))));
    let server = TestServer::start(Arc::new(Runtime::for_tests("ws/api")), limited_routes(limiter)).await;
    let c = client();
    let url = server.url("/ws/api/limited");
    let r = c.post(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["ratelimit-policy"], "\"limit\";q=2;w=1");
    assert_eq!(r.headers()["ratelimit"], "\"limit\";r=1;t=1");
    assert_eq!(c.post(&url).send().await.unwrap().status(), 200);
    // Hammer while limited: these must not push the next allowed time further out.
    for _ in 0..20 {
        let r = c.post(&url).send().await.unwrap();
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after"], "1");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "rate_limited");
    }
    tokio::time::sleep(Duration::from_millis(550)).await;
    assert_eq!(
        c.post(&url).send().await.unwrap().status(),
        200,
        "one request passes after T, despite the rejected ones"
    );
}

fn key_record(key: &str, name: &str, owner: &str, expires_at: Option<i64>) -> KeyRecord {
    KeyRecord {
        id: format!("key_{name}"),
        name: name.into(),
        owner: owner.into(),
        prefix: format::display_prefix(key),
        hash: format::hash(key),
        created_at: unix_now(),
        expires_at,
        revoked_at: None,
    }
}

/// `/ws/api/whoami`: Check API Key at `location`, then the identity.
fn key_routes(location: KeyLocation) -> Router<Arc<Runtime>> {
    let location = Arc::new(location);
    Router::new().route(
        "/ws/api/whoami",
        any(handler!(
            "whoami",
            [location] | ex,
            metrics,
            _body | {
                match ex
                    .check_api_key(&metrics.node("auth", "check-api-key"), &location)
                    .await
                {
                    Some(id) => ex.json(
                        StatusCode::OK,
                        &serde_json::json!({"user": &*id.user, "key_name": &*id.key_name, "key_id": &*id.key_id}),
                    ),
                    None => ex.status(StatusCode::UNAUTHORIZED),
                }
            }
        )),
    )
}

async fn start_with_keys(location: KeyLocation, keys: Vec<KeyRecord>) -> (TestServer, Arc<KeyIndex>) {
    let index = Arc::new(KeyIndex::new(keys));
    let rt = Runtime::new(
        "acme/shop",
        svc_sdk::Env::deployed("1", "x"),
        Default::default(),
        index.clone(),
    );
    (TestServer::start(Arc::new(rt), key_routes(location)).await, index)
}

#[tokio::test]
async fn api_keys_in_every_location() {
    let key = format::generate();
    type Present = Box<dyn Fn(reqwest::RequestBuilder, &str) -> reqwest::RequestBuilder>;
    let cases: Vec<(KeyLocation, Present, &str)> = vec![
        (
            KeyLocation::HeaderXApiKey,
            Box::new(|r, k| r.header("x-api-key", k)),
            "ApiKey realm=\"acme/shop\", header=\"X-API-Key\"",
        ),
        (
            KeyLocation::AuthorizationBearer,
            Box::new(|r, k| r.header("authorization", format!("Bearer {k}"))),
            "Bearer realm=\"acme/shop\"",
        ),
        (
            KeyLocation::Header("x-hooks-key"),
            Box::new(|r, k| r.header("x-hooks-key", k)),
            "ApiKey realm=\"acme/shop\", header=\"x-hooks-key\"",
        ),
        (
            KeyLocation::Query("api_key"),
            Box::new(|r, k| r.query(&[("api_key", k)])),
            "ApiKey realm=\"acme/shop\", query=\"api_key\"",
        ),
    ];
    for (location, attach, challenge) in cases {
        let (server, _) = start_with_keys(location.clone(), vec![key_record(&key, "ci", "alice", None)]).await;
        let url = server.url("/ws/api/whoami");
        let r = attach(client().get(&url), &key).send().await.unwrap();
        assert_eq!(r.status(), 200, "{location:?}");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["user"], "alice");
        assert_eq!(body["key_name"], "ci");
        for bad in ["", "svck_nope", &format::generate()] {
            let r = attach(client().get(&url), bad).send().await.unwrap();
            assert_eq!(r.status(), 401, "{location:?} {bad}");
            assert_eq!(r.headers()["www-authenticate"], challenge);
            let body: serde_json::Value = r.json().await.unwrap();
            assert_eq!(body["error"]["code"], "unauthorized");
        }
        let r = client().get(&url).send().await.unwrap();
        assert_eq!(r.status(), 401);
    }
}

#[tokio::test]
async fn expired_keys_stop_at_their_expiry() {
    let key = format::generate();
    let (server, _) = start_with_keys(
        KeyLocation::HeaderXApiKey,
        vec![key_record(&key, "short", "bob", Some(unix_now() + 2))],
    )
    .await;
    let url = server.url("/ws/api/whoami");
    let status = || status_of(client().get(&url).header("x-api-key", &key));
    assert_eq!(status().await, 200);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(status().await, 401);
}

#[tokio::test]
async fn a_revoked_key_stops_working_within_two_seconds_without_a_restart() {
    let dir = std::env::temp_dir().join(format!("svc-revoke-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("workspace.db");
    let key = format::generate();
    let store = Arc::new(SqliteStore::open(&path).unwrap());
    store.insert_key(&key_record(&key, "ci", "alice", None)).unwrap();
    let (server, index) = start_with_keys(KeyLocation::HeaderXApiKey, vec![]).await;
    let reloader =
        svc_runtime::server::spawn_key_reloader(store.clone(), index, Arc::new(Runtime::for_tests("ws/api")));
    let url = server.url("/ws/api/whoami");
    // The key appears without a restart too.
    let deadline = Instant::now() + Duration::from_secs(2);
    while status_of(client().get(&url).header("x-api-key", &key)).await != 200 {
        assert!(Instant::now() < deadline, "a new key was not picked up within 2 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Revoke it from another connection, as `svc keys revoke` does.
    let revoked_at = Instant::now();
    SqliteStore::open(&path).unwrap().revoke_key("ci", unix_now()).unwrap();
    loop {
        let status = client()
            .get(&url)
            .header("x-api-key", &key)
            .send()
            .await
            .unwrap()
            .status();
        if status == 401 {
            break;
        }
        assert!(
            revoked_at.elapsed() < Duration::from_secs(2),
            "the revoked key still worked after 2 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = revoked_at.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
    reloader.abort();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn ipv6_clients_rotating_inside_their_64_share_one_limit() {
    // The test client connects from 127.0.0.1, trusted as a proxy, and says which IPv6
    // address it stands for: 40 addresses of one /64 against a limit of 5.
    let mut rt = Runtime::for_tests("ws/api");
    rt.trusted_proxies = svc_runtime::client_ip::TrustedProxies::parse("127.0.0.1/32").unwrap();
    let limiter = Arc::new(RateLimiter::in_memory(
        "limit",
        Quota::per(5, Duration::from_secs(3600)),
    ));
    let server = TestServer::start(Arc::new(rt), limited_routes(limiter)).await;
    let c = client();
    let send = |ip: String| {
        c.post(server.url("/ws/api/limited"))
            .header("x-forwarded-for", ip)
            .send()
    };
    let mut passed = 0;
    for n in 0..40u32 {
        let r = send(format!("2001:db8:77:1:{:x}::{:x}", n * 7919 % 65536, n + 1))
            .await
            .unwrap();
        if r.status() == StatusCode::OK {
            passed += 1;
        }
    }
    assert_eq!(passed, 5, "one /64 is one client");
    // Another /64 is another client.
    assert_eq!(send("2001:db8:77:2::1".into()).await.unwrap().status(), StatusCode::OK);
}

/// The outside review's bypass: behind nginx (which appends to `X-Forwarded-For` and passes
/// a client's own `Forwarded` through), 80 requests that each forged another
/// `Forwarded: for=…` all passed a limit of 5 by IP. Only the one named header counts.
#[tokio::test]
async fn forged_forwarding_headers_of_other_kinds_do_not_escape_a_limit_by_ip() {
    use svc_runtime::client_ip::{ClientIpHeader, TrustedProxies};
    let start = |header: &str| {
        let mut rt = Runtime::for_tests("ws/api");
        rt.trusted_proxies = TrustedProxies::parse("127.0.0.1/32")
            .unwrap()
            .with_header(ClientIpHeader::parse(header).unwrap());
        let limiter = Arc::new(RateLimiter::in_memory(
            "limit",
            Quota::per(5, Duration::from_secs(3600)),
        ));
        TestServer::start(Arc::new(rt), limited_routes(limiter))
    };
    let c = client();
    /// A header and its value.
    type Header = (&'static str, &'static str);
    // (the header the operator names, what its proxy wrote, forged headers of other kinds)
    let cases: [(&str, Header, [Header; 3]); 3] = [
        (
            "x-forwarded-for",
            ("x-forwarded-for", "203.0.113.9"),
            [
                ("forwarded", "for=198.51.100.{n}"),
                ("x-real-ip", "198.51.100.{n}"),
                ("true-client-ip", "198.51.100.{n}"),
            ],
        ),
        (
            "forwarded",
            ("forwarded", "for=203.0.113.9;proto=https"),
            [
                ("x-forwarded-for", "198.51.100.{n}"),
                ("x-real-ip", "198.51.100.{n}"),
                ("cf-connecting-ip", "198.51.100.{n}"),
            ],
        ),
        (
            "x-real-ip",
            ("x-real-ip", "203.0.113.9"),
            [
                ("x-forwarded-for", "198.51.100.{n}"),
                ("forwarded", "for=198.51.100.{n}"),
                ("true-client-ip", "198.51.100.{n}"),
            ],
        ),
    ];
    for (header, (proxy_header, proxy_value), forged) in cases {
        let server = start(header).await;
        let mut passed = 0;
        for n in 0..20 {
            let mut request = c.post(server.url("/ws/api/limited")).header(proxy_header, proxy_value);
            for (name, value) in forged {
                request = request.header(name, value.replace("{n}", &n.to_string()));
            }
            if request.send().await.unwrap().status() == StatusCode::OK {
                passed += 1;
            }
        }
        assert_eq!(
            passed, 5,
            "believing {header}: forged headers of other kinds were believed"
        );
        // Entries to the left of what the proxy wrote are the client's own, as is an
        // entry the walk cannot read.
        if header != "x-real-ip" {
            let (forged_left, unreadable) = if header == "forwarded" {
                ("for=198.51.100.77, for=203.0.113.9", "for=198.51.100.78, for=unknown")
            } else {
                ("198.51.100.77, 203.0.113.9", "198.51.100.78, unknown")
            };
            let r = c.post(server.url("/ws/api/limited")).header(proxy_header, forged_left);
            assert_eq!(
                r.send().await.unwrap().status(),
                StatusCode::TOO_MANY_REQUESTS,
                "{header}"
            );
            // The unreadable entry ends the walk at the proxy: a client of its own (the
            // loopback peer), not 198.51.100.78.
            let r = c.post(server.url("/ws/api/limited")).header(proxy_header, unreadable);
            assert_eq!(r.send().await.unwrap().status(), StatusCode::OK, "{header}");
        }
    }
}
