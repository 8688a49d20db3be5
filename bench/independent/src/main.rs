//! The benchmarked route of `bench/project` (`POST /acme/shop/orders`) and its cost
//! ladder (`/acme/shop/ladder/{bare,origin,origin-key,chain}`), written by hand on axum the
//! way a careful engineer would without svc, and sharing **no code** with it: its own
//! origin check, the `governor` crate's keyed GCRA limiter, SHA-256 (`sha2`) with a
//! constant-time compare (`subtle`), serde for the body, and the two shop nodes' logic
//! written out as plain functions.
//!
//! It answers with the same status, the same JSON and the same response headers as the
//! generated server (`vary`, `access-control-allow-origin`, `ratelimit-policy`,
//! `ratelimit`, `x-quote-status`, `x-request-id`, `content-type`), so that a benchmark
//! compares equal work. It reads its API keys from the same SQLite workspace store
//! (`svc keys create --store PATH`), with its own SQL.
//!
//! `independent --port PORT --store PATH` (prints `listening on http://ADDR` once bound)

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CONTENT_TYPE, ORIGIN, RETRY_AFTER, VARY, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::post;
use governor::middleware::StateInformationMiddleware;
use governor::{DefaultKeyedRateLimiter, Quota};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};
use subtle::ConstantTimeEq;

// ---------------------------------------------------------------------------------------
// The request and response bodies (the shop's structures and enums).

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Order {
    #[allow(dead_code)] // required by the structure, not read by the route
    customer_email: String,
    currency: Currency,
    lines: Vec<OrderLine>,
    coupon_code: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OrderLine {
    sku: String,
    quantity: f64,
    unit_price: f64,
    #[allow(dead_code)]
    tags: Option<Vec<String>>,
}

#[derive(Deserialize, Serialize, Clone, Copy)]
enum Currency {
    #[serde(rename = "EUR")]
    Eur,
    #[serde(rename = "USD")]
    Usd,
    #[serde(rename = "GBP")]
    Gbp,
}

#[derive(Serialize, Clone, Copy)]
enum QuoteStatus {
    #[serde(rename = "accepted")]
    Accepted,
    #[serde(rename = "needs-review")]
    NeedsReview,
}

impl QuoteStatus {
    fn header(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            QuoteStatus::Accepted => "accepted",
            QuoteStatus::NeedsReview => "needs-review",
        })
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PricedLine {
    sku: String,
    #[serde(serialize_with = "number")]
    quantity: f64,
    #[serde(serialize_with = "number")]
    line_total: f64,
}

#[derive(Serialize)]
struct Quote {
    currency: Currency,
    lines: Vec<PricedLine>,
    #[serde(serialize_with = "number")]
    subtotal: f64,
    #[serde(serialize_with = "number")]
    discount: f64,
    #[serde(serialize_with = "number")]
    total: f64,
}

/// Numbers as JavaScript writes them: `2`, not `2.0`, for an integral value.
fn number<S: serde::Serializer>(x: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        serializer.serialize_i64(*x as i64)
    } else {
        serializer.serialize_f64(*x)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Created<'a> {
    status: QuoteStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    customer: Option<&'a str>,
    quote: &'a Quote,
    #[serde(serialize_with = "number")]
    line_count: f64,
}

// ---------------------------------------------------------------------------------------
// The route's own work: the logic of the shop's two code nodes.

struct Rejection {
    code: &'static str,
    message: String,
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

const COUPONS: &[(&str, f64)] = &[("WELCOME10", 0.10), ("VIP25", 0.25)];
const MAX_LINES: usize = 50;
const REVIEW_ABOVE_EUR: f64 = 1000.0;

fn price(order: Order) -> Result<Quote, Rejection> {
    let reject = |code, message| Err(Rejection { code, message });
    if order.lines.is_empty() {
        return reject("EMPTY_ORDER", "the order has no lines".into());
    }
    if order.lines.len() > MAX_LINES {
        return reject("TOO_MANY_LINES", format!("the order has more than {MAX_LINES} lines"));
    }
    let mut lines = Vec::with_capacity(order.lines.len());
    for line in order.lines {
        if line.quantity <= 0.0 || line.quantity.fract() != 0.0 {
            return reject("INVALID_QUANTITY", format!("line `{}` has an invalid quantity", line.sku));
        }
        if line.unit_price < 0.0 {
            return reject("INVALID_PRICE", format!("line `{}` has a negative price", line.sku));
        }
        let line_total = round2(line.quantity * line.unit_price);
        lines.push(PricedLine { sku: line.sku, quantity: line.quantity, line_total });
    }
    let subtotal = round2(lines.iter().map(|l| l.line_total).sum());
    let rate = match &order.coupon_code {
        None => 0.0,
        Some(code) => match COUPONS.iter().find(|(c, _)| c.eq_ignore_ascii_case(code)) {
            Some((_, rate)) => *rate,
            None => return reject("UNKNOWN_COUPON", format!("unknown coupon `{code}`")),
        },
    };
    let discount = round2(subtotal * rate);
    Ok(Quote { currency: order.currency, lines, subtotal, discount, total: round2(subtotal - discount) })
}

fn decide(total: f64, currency: Currency) -> QuoteStatus {
    let in_eur = total
        * match currency {
            Currency::Eur => 1.0,
            Currency::Usd => 0.92,
            Currency::Gbp => 1.17,
        };
    if in_eur > REVIEW_ABOVE_EUR { QuoteStatus::NeedsReview } else { QuoteStatus::Accepted }
}

// ---------------------------------------------------------------------------------------
// Request ids: the caller's if it is well-formed, else 12 hex digits random per process
// and 12 of a counter.

static REQUESTS: AtomicU64 = AtomicU64::new(0);

fn request_id(headers: &HeaderMap, process: u64) -> HeaderValue {
    if let Some(given) = headers.get(REQUEST_ID) {
        let bytes = given.as_bytes();
        if !bytes.is_empty() && bytes.len() <= 64 && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(b)) {
            return given.clone();
        }
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let n = REQUESTS.fetch_add(1, Ordering::Relaxed) & 0xffff_ffff_ffff;
    let mut text = [0u8; 24];
    for (i, word) in [process, n].into_iter().enumerate() {
        for j in 0..12 {
            text[i * 12 + j] = HEX[((word >> (44 - 4 * j)) & 0xf) as usize];
        }
    }
    HeaderValue::from_bytes(&text).expect("hex is a valid header value")
}

// ---------------------------------------------------------------------------------------
// Check Origin: exact origins, and `https://*.shop.example.com` for one or more labels.

const EXACT_ORIGINS: &[&[u8]] = &[b"https://shop.example.com", b"http://localhost:5173"];
const WILDCARD_SCHEME: &[u8] = b"https://";
const WILDCARD_SUFFIX: &[u8] = b".shop.example.com";

fn origin_allowed(origin: &[u8]) -> bool {
    if EXACT_ORIGINS.contains(&origin) {
        return true;
    }
    let Some(rest) = origin.strip_prefix(WILDCARD_SCHEME) else { return false };
    let Some(labels) = rest.strip_suffix(WILDCARD_SUFFIX) else { return false };
    !labels.is_empty()
        && labels.split(|&b| b == b'.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
                && label[0] != b'-'
                && label[label.len() - 1] != b'-'
        })
}

// ---------------------------------------------------------------------------------------
// API keys: SHA-256 of the presented key, found by its first eight bytes, then compared
// in full in constant time.

struct ApiKey {
    digest: [u8; 32],
    /// The limiter's key: a small number instead of the key's text.
    slot: u32,
    owner: String,
    expires_at: Option<i64>,
}

struct Keys {
    by_digest_prefix: HashMap<u64, ApiKey>,
}

impl Keys {
    fn load(path: &str) -> rusqlite::Result<Keys> {
        let db = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        let mut query = db.prepare("SELECT hash, owner, expires_at FROM api_keys WHERE revoked_at IS NULL")?;
        let mut by_digest_prefix = HashMap::new();
        let rows = query.query_map([], |row| Ok((row.get::<_, Vec<u8>>(0)?, row.get::<_, String>(1)?, row.get::<_, Option<i64>>(2)?)))?;
        for (slot, row) in rows.enumerate() {
            let (hash, owner, expires_at) = row?;
            let Ok(digest) = <[u8; 32]>::try_from(hash.as_slice()) else { continue };
            let prefix = u64::from_le_bytes(digest[..8].try_into().expect("eight bytes"));
            by_digest_prefix.insert(prefix, ApiKey { digest, slot: slot as u32, owner, expires_at });
        }
        Ok(Keys { by_digest_prefix })
    }

    fn verify(&self, presented: Option<&HeaderValue>) -> Option<&ApiKey> {
        let presented = presented?.as_bytes().trim_ascii();
        if presented.len() != 41 || !presented.starts_with(b"svck_") {
            return None;
        }
        let digest: [u8; 32] = Sha256::digest(presented).into();
        let key = self.by_digest_prefix.get(&u64::from_le_bytes(digest[..8].try_into().expect("eight bytes")))?;
        if !bool::from(key.digest.ct_eq(&digest)) {
            return None;
        }
        match key.expires_at {
            Some(at) if at <= SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64) => None,
            _ => Some(key),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The server.

const LIMIT: u32 = 1_000_000_000;
const RATELIMIT_POLICY: HeaderValue = HeaderValue::from_static("\"limit\";q=1000000000;w=1");
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
const RATELIMIT_POLICY_NAME: HeaderName = HeaderName::from_static("ratelimit-policy");
const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const API_KEY: HeaderName = HeaderName::from_static("x-api-key");
const QUOTE_STATUS: HeaderName = HeaderName::from_static("x-quote-status");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

struct App {
    keys: Keys,
    limiter: DefaultKeyedRateLimiter<u32, StateInformationMiddleware>,
    replenish_nanos: u128,
    process: u64,
}

/// Which protections a route of the ladder runs.
#[derive(Clone, Copy)]
struct Checks {
    origin: bool,
    key: bool,
    limit: bool,
    /// The full route answers with the caller's owner as `customer`.
    customer: bool,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    code: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_id: Option<&'a str>,
}

/// The response with `headers` as its header map: moved in whole, not merged header by
/// header into the empty map a response starts with.
fn respond(status: StatusCode, headers: HeaderMap, body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

fn error(status: StatusCode, code: &str, message: &str, id: &HeaderValue, mut headers: HeaderMap) -> Response {
    let detail = ErrorDetail { status: Some(status.as_u16()), code, message, request_id: id.to_str().ok() };
    let body = serde_json::to_vec(&ErrorBody { error: detail }).expect("an error serializes");
    headers.insert(CONTENT_TYPE, JSON);
    respond(status, headers, body)
}

async fn handle(app: &App, checks: Checks, headers: HeaderMap, body: Bytes) -> Response {
    let id = request_id(&headers, app.process);
    // Room for every header of the full chain's answer (seven) without growing.
    let mut out = HeaderMap::with_capacity(8);
    if checks.origin {
        out.insert(VARY, HeaderValue::from_static("Origin"));
        match headers.get(ORIGIN) {
            Some(origin) if origin_allowed(origin.as_bytes()) => {
                out.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
            }
            Some(_) => {
                out.insert(REQUEST_ID, id.clone());
                return error(StatusCode::FORBIDDEN, "forbidden", "this origin may not call this route", &id, out);
            }
            None => {}
        }
    }
    let mut owner = None;
    let mut slot = 0;
    if checks.key {
        let Some(key) = app.keys.verify(headers.get(API_KEY)) else {
            out.insert(WWW_AUTHENTICATE, HeaderValue::from_static("ApiKey realm=\"acme/shop\", header=\"X-API-Key\""));
            out.insert(REQUEST_ID, id.clone());
            return error(StatusCode::UNAUTHORIZED, "unauthorized", "a valid API key is required", &id, out);
        };
        owner = Some(key.owner.as_str());
        slot = key.slot;
    }
    if checks.limit {
        out.insert(RATELIMIT_POLICY_NAME, RATELIMIT_POLICY);
        match app.limiter.check_key(&slot) {
            Ok(state) => {
                let remaining = state.remaining_burst_capacity();
                let used = u128::from(LIMIT - remaining);
                let reset = (used * app.replenish_nanos).div_ceil(1_000_000_000);
                let value = format!("\"limit\";r={remaining};t={reset}");
                out.insert(RATELIMIT, HeaderValue::from_str(&value).expect("digits are a valid header value"));
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(governor::clock::Clock::now(&governor::clock::DefaultClock::default()));
                let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                out.insert(RATELIMIT, HeaderValue::from_str(&format!("\"limit\";r=0;t={seconds}")).expect("digits"));
                out.insert(RETRY_AFTER, HeaderValue::from(seconds));
                out.insert(REQUEST_ID, id.clone());
                return error(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "too many requests", &id, out);
            }
        }
    }
    let order: Order = match serde_json::from_slice(&body) {
        Ok(order) => order,
        Err(e) => {
            out.insert(REQUEST_ID, id.clone());
            return error(StatusCode::BAD_REQUEST, "invalid_body", &e.to_string(), &id, out);
        }
    };
    let currency = order.currency;
    let quote = match price(order) {
        Ok(quote) => quote,
        Err(rejection) => {
            let detail = ErrorDetail { status: None, code: rejection.code, message: &rejection.message, request_id: None };
            let body = serde_json::to_vec(&ErrorBody { error: detail }).expect("an error serializes");
            out.insert(CONTENT_TYPE, JSON);
            out.insert(REQUEST_ID, id);
            return respond(StatusCode::UNPROCESSABLE_ENTITY, out, body);
        }
    };
    let status = decide(quote.total, currency);
    let line_count = quote.lines.len() as f64;
    let body = serde_json::to_vec(&Created { status, customer: owner.filter(|_| checks.customer), quote: &quote, line_count })
        .expect("the answer serializes");
    out.insert(CONTENT_TYPE, JSON);
    out.insert(QUOTE_STATUS, status.header());
    out.insert(REQUEST_ID, id);
    respond(StatusCode::CREATED, out, body)
}

fn route(checks: Checks) -> axum::routing::MethodRouter<Arc<App>> {
    post(move |State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes| async move { handle(&app, checks, headers, body).await })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let port: u16 = arg("--port").and_then(|p| p.parse().ok()).unwrap_or(8082);
    let store = arg("--store").unwrap_or_else(|| ".svc/workspace.db".into());
    let keys = Keys::load(&store).unwrap_or_else(|e| panic!("cannot read API keys from {store}: {e}"));
    let quota = Quota::per_second(NonZeroU32::new(LIMIT).expect("non-zero"));
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).expect("randomness");
    let app = Arc::new(App {
        keys,
        replenish_nanos: quota.replenish_interval().as_nanos(),
        limiter: DefaultKeyedRateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
        process: u64::from_le_bytes(random) & 0xffff_ffff_ffff,
    });
    let all = Checks { origin: true, key: true, limit: true, customer: true };
    let none = Checks { origin: false, key: false, limit: false, customer: false };
    let router = Router::new()
        .route("/acme/shop/orders", route(all))
        .route("/acme/shop/ladder/bare", route(none))
        .route("/acme/shop/ladder/origin", route(Checks { origin: true, ..none }))
        .route("/acme/shop/ladder/origin-key", route(Checks { origin: true, key: true, ..none }))
        .route("/acme/shop/ladder/chain", route(Checks { customer: false, ..all }))
        .with_state(app);
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime").block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
        println!("listening on http://{}", listener.local_addr().expect("an address"));
        axum::serve(listener, router).await.expect("serve");
    });
}
