//! The benchmarked route of `bench/project` (`POST /acme/shop/orders`), written by hand
//! the way an experienced developer would on axum: Check Origin, Check API Key, Rate Limit
//! by API key, the two shop code nodes, and the same JSON response with the same headers
//! (CORS, RateLimit, x-quote-status, x-request-id).
//!
//! It uses the same building blocks as generated code (the origin matcher, the GCRA
//! store, the API key index, the node functions) but none of the generated glue: no
//! `Exchange`, no metrics, no access log, no lazily parsed request.
//!
//! `baseline --port PORT --store PATH`

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use bench_nodes::assets::Order;
use bench_nodes::nodes::{decide_status, price_order};
use std::sync::Arc;
use std::time::Duration;
use svc_runtime::apikey::{unix_now, KeyIndex, KeyLocation};
use svc_runtime::cors::{OriginConfig, OriginPolicy};
use svc_runtime::ratelimit::{clock, LimitKey, MemoryStore, Quota};
use svc_runtime::runtime::RuntimeHost;
use svc_runtime::store::{SqliteStore, WorkspaceStore};
use svc_sdk::{Env, Host, RunContext};

struct App {
    origin: OriginPolicy,
    limiter: MemoryStore,
    quota: Quota,
    keys: KeyIndex,
    env: Arc<Env>,
    host: Arc<dyn Host>,
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({"error": {"status": status.as_u16(), "code": code, "message": message}});
    (status, [("content-type", "application/json")], body.to_string()).into_response()
}

#[derive(serde::Serialize)]
struct Created<'a> {
    status: &'a bench_nodes::assets::QuoteStatus,
    customer: &'a str,
    quote: &'a bench_nodes::assets::Quote,
    #[serde(rename = "lineCount")]
    line_count: f64,
}

async fn orders(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let mut out = HeaderMap::new();
    out.insert("x-request-id", HeaderValue::from_str(&svc_runtime::request_id::generate()).unwrap());
    let decision = app.origin.check(&headers);
    let allowed = decision.is_allowed();
    app.origin.decorate(decision, &mut out);
    if !allowed {
        return (out, error(StatusCode::FORBIDDEN, "forbidden", "this origin may not call this route")).into_response();
    }
    let Ok(identity) = app.keys.verify(KeyLocation::HeaderXApiKey.extract(&headers, None).as_deref(), unix_now()) else {
        out.insert("www-authenticate", HeaderValue::from_static("ApiKey realm=\"acme/shop\", header=\"X-API-Key\""));
        return (out, error(StatusCode::UNAUTHORIZED, "unauthorized", "a valid API key is required")).into_response();
    };
    let limit = app.limiter.check_now(app.limiter.hash(&LimitKey::KeyId(&identity.key_id)), &app.quota, clock());
    out.insert("ratelimit-policy", HeaderValue::from_static("\"limit\";q=1000000000;w=1"));
    out.insert("ratelimit", HeaderValue::from_str(&format!("\"limit\";r={};t={}", limit.remaining, limit.reset.as_secs_f64().ceil() as u64)).unwrap());
    if !limit.allowed {
        return (out, error(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "too many requests")).into_response();
    }
    let order: Order = match serde_json::from_slice(&body) {
        Ok(o) => o,
        Err(e) => return (out, error(StatusCode::BAD_REQUEST, "invalid_body", &e.to_string())).into_response(),
    };
    let currency = order.currency;
    let ctx = RunContext::new(price_order::NODE_KEY, price_order::Inputs { order, max_lines: 50.0 }, None, app.env.clone(), app.host.clone());
    let priced = match price_order::run(&ctx).await {
        Ok(p) => p,
        Err(f) => {
            let body = serde_json::json!({"error": {"code": f.code, "message": f.message}});
            return (StatusCode::UNPROCESSABLE_ENTITY, out, [("content-type", "application/json")], body.to_string()).into_response();
        }
    };
    let ctx = RunContext::new(decide_status::NODE_KEY, decide_status::Inputs { total: priced.quote.total, currency, review_above: 1000.0 }, None, app.env.clone(), app.host.clone());
    let decided = match decide_status::run(&ctx).await {
        Ok(d) => d,
        Err(f) => return (out, error(StatusCode::INTERNAL_SERVER_ERROR, "node_failed", &f.message)).into_response(),
    };
    out.insert("x-quote-status", HeaderValue::from_static(decided.status.value()));
    out.insert("content-type", HeaderValue::from_static("application/json"));
    let body = serde_json::to_vec(&Created { status: &decided.status, customer: &identity.user, quote: &priced.quote, line_count: priced.line_count }).unwrap();
    (StatusCode::CREATED, out, body).into_response()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let port: u16 = arg("--port").and_then(|p| p.parse().ok()).unwrap_or(8081);
    let store = SqliteStore::open(std::path::Path::new(&arg("--store").unwrap_or_else(|| ".svc/workspace.db".into()))).expect("open the store");
    let app = Arc::new(App {
        origin: OriginPolicy::new(OriginConfig {
            allowed_origins: &["https://shop.example.com", "https://*.shop.example.com", "http://localhost:5173"],
            missing_origin_allowed: true,
            methods: &["POST"],
            allowed_headers: &["content-type", "x-api-key"],
            expose_headers: &[],
            allow_credentials: false,
            max_age_seconds: Some(600),
        })
        .unwrap(),
        limiter: MemoryStore::default(),
        quota: Quota::per(1_000_000_000, Duration::from_secs(1)),
        keys: KeyIndex::new(store.list_keys().expect("read keys")),
        env: Arc::new(Env::deployed("0.1.0", "baseline")),
        host: Arc::new(RuntimeHost::new(Default::default(), Default::default())),
    });
    let router = Router::new().route("/acme/shop/orders", post(orders)).with_state(app);
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        println!("listening on http://{}", listener.local_addr().unwrap());
        axum::serve(listener, router).await.unwrap();
    });
}
